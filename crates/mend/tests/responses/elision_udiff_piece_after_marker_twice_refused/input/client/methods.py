"""Request helpers shared by the pool managers."""

from __future__ import annotations


class RequestMethods:
    """Convenience methods for making requests."""

    def __init__(self, headers=None):
        self.headers = headers or {}

    def request_encode_url(self, method, url, fields=None, headers=None, **kw):
        """
        Make a request with the ``fields`` encoded in the url. This suits
        methods like GET, HEAD and DELETE.
        """
        if headers is None:
            headers = self.headers

        extra = {"headers": headers}
        extra.update(kw)
        if fields:
            url += "?" + "&".join(f"{k}={v}" for k, v in fields.items())
        return self.urlopen(method, url, **extra)

    def request_encode_body(self, method, url, fields=None, headers=None, **kw):
        """
        Make a request with the ``fields`` encoded in the body. This suits
        methods like POST and PUT.
        """
        if headers is None:
            headers = self.headers

        extra = {"headers": headers}
        extra.update(kw)
        body = "&".join(f"{k}={v}" for k, v in (fields or {}).items())
        return self.urlopen(method, url, body=body, **extra)
