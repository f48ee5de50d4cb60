'use strict';

module.exports = function requestId(req, res, next) {
  const id = req.get('x-request-id') || require('crypto').randomUUID();
  res.set('x-request-id', id);
  req.id = id;
  next();
};
