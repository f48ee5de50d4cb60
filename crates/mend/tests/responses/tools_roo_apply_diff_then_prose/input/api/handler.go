package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"example.com/shortener/store"
)

// Handler serves the link shortener's HTTP API.
type Handler struct {
	Store   store.Store
	BaseURL string
	Logger  *slog.Logger
}

type createRequest struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expires_in,omitempty"`
}

type linkResponse struct {
	Code      string     `json:"code"`
	Short     string     `json:"short"`
	Target    string     `json:"target"`
	Visits    int64      `json:"visits"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Routes registers the handler's endpoints on mux.
func (h *Handler) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /links", h.create)
	mux.HandleFunc("GET /links/{code}", h.show)
	mux.HandleFunc("DELETE /links/{code}", h.remove)
	mux.HandleFunc("GET /{code}", h.redirect)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body must be JSON")
		return
	}
	if req.URL == "" {
		writeError(w, http.StatusBadRequest, "url is required")
		return
	}
	var expires *time.Time
	if req.ExpiresIn > 0 {
		t := time.Now().Add(time.Duration(req.ExpiresIn) * time.Second)
		expires = &t
	}
	link, err := h.Store.Create(r.Context(), req.URL, expires)
	if err != nil {
		h.Logger.Error("create link", "err", err)
		writeError(w, http.StatusInternalServerError, "could not create link")
		return
	}
	writeJSON(w, http.StatusCreated, h.response(link))
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	link, err := h.Store.Get(r.Context(), r.PathValue("code"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no such link")
		return
	}
	if err != nil {
		h.Logger.Error("get link", "err", err)
		writeError(w, http.StatusInternalServerError, "lookup failed")
		return
	}
	writeJSON(w, http.StatusOK, h.response(link))
}

func (h *Handler) remove(w http.ResponseWriter, r *http.Request) {
	if err := h.Store.Delete(r.Context(), r.PathValue("code")); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, "no such link")
			return
		}
		h.Logger.Error("delete link", "err", err)
		writeError(w, http.StatusInternalServerError, "delete failed")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) redirect(w http.ResponseWriter, r *http.Request) {
	link, err := h.Store.Get(r.Context(), r.PathValue("code"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if link.ExpiresAt != nil && time.Now().After(*link.ExpiresAt) {
		http.Error(w, "link expired", http.StatusGone)
		return
	}
	go h.Store.CountVisit(r.Context(), link.Code)
	http.Redirect(w, r, link.Target, http.StatusFound)
}

func (h *Handler) response(link store.Link) linkResponse {
	return linkResponse{
		Code:      link.Code,
		Short:     h.BaseURL + "/" + link.Code,
		Target:    link.Target,
		Visits:    link.Visits,
		ExpiresAt: link.ExpiresAt,
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "status": strconv.Itoa(status)})
}
