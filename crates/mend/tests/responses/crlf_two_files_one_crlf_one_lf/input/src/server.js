'use strict';

const express = require('express');
const helmet = require('helmet');
const morgan = require('morgan');
const { Pool } = require('pg');

const PORT = Number(process.env.PORT || 3000);
const pool = new Pool({ connectionString: process.env.DATABASE_URL });

const app = express();
app.use(helmet());
app.use(express.json({ limit: '100kb' }));
app.use(morgan('combined'));

function asyncRoute(handler) {
  return (req, res, next) => {
    Promise.resolve(handler(req, res, next)).catch(next);
  };
}

app.get('/healthz', (req, res) => {
  res.json({ ok: true, uptime: process.uptime() });
});

app.get(
  '/api/notes',
  asyncRoute(async (req, res) => {
    const limit = Math.min(Number(req.query.limit) || 20, 100);
    const { rows } = await pool.query(
      'SELECT id, title, updated_at FROM notes ORDER BY updated_at DESC LIMIT $1',
      [limit],
    );
    res.json(rows);
  }),
);

app.get(
  '/api/notes/:id',
  asyncRoute(async (req, res) => {
    const { rows } = await pool.query('SELECT * FROM notes WHERE id = $1', [req.params.id]);
    if (rows.length === 0) {
      res.status(404).json({ error: 'note not found' });
      return;
    }
    res.json(rows[0]);
  }),
);

app.post(
  '/api/notes',
  asyncRoute(async (req, res) => {
    const { title, body } = req.body;
    if (!title) {
      res.status(400).json({ error: 'title is required' });
      return;
    }
    const { rows } = await pool.query(
      'INSERT INTO notes (title, body) VALUES ($1, $2) RETURNING *',
      [title, body || ''],
    );
    res.status(201).json(rows[0]);
  }),
);

app.delete(
  '/api/notes/:id',
  asyncRoute(async (req, res) => {
    await pool.query('DELETE FROM notes WHERE id = $1', [req.params.id]);
    res.status(204).end();
  }),
);

app.use((err, req, res, next) => {
  console.error(err);
  res.status(500).json({ error: 'internal error' });
});

const server = app.listen(PORT, () => {
  console.log(`notes api listening on ${PORT}`);
});

process.on('SIGTERM', () => {
  server.close(() => pool.end());
});

module.exports = app;
