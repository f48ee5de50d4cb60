package api

import (
	"net/http"

	"github.com/skip2/go-qrcode"
)

// qr serves a PNG QR code for a link's short URL.
func (h *Handler) qr(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	png, err := qrcode.Encode(h.BaseURL+"/"+code, qrcode.Medium, 256)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not render code")
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(png)
}
