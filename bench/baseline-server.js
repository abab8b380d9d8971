#!/usr/bin/env node
// A baseline of the benchmark: answers every request with the given bytes (a real check answer),
// as a bare Express 5 route (`express`) or a raw node:http handler (`raw`). Prints its port.
//   node bench/baseline-server.js express|raw BODY_FILE
const fs = require('node:fs');
const http = require('node:http');

const [kind, bodyFile] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile);
let handler;
if (kind === 'express') {
  const express = require('express');
  const app = express();
  app.disable('x-powered-by');
  app.get('/licenses/check', (_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  });
  handler = app;
} else if (kind === 'raw') {
  handler = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  };
} else {
  throw new Error(`unknown baseline ${kind}`);
}
const server = http.createServer(handler);
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
