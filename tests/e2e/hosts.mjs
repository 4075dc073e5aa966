// hosts.mjs — a second real origin for the tests that need one (results out of an iframe, the SCORM
// runtime): a small static server on 127.0.0.1 at a port the system picks, so its pages are at
// another origin than the playground's server (127.0.0.1:PORT) and, being on the loopback
// address, may frame it (a page fulfilled by page.route has no address, and Chromium's private
// network rules keep it from framing 127.0.0.1). It serves pages given as text, and folders.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.xml': 'application/xml',
  '.xsd': 'application/xml', '.map': 'application/json',
};

/**
 * Starts a host. `pages`: {'/host.html': '<!doctype html>…'} (the returned `pages` may be added to
 * later, once the host's origin is known); `folders`: {'/lms/': '/abs/dir'}. `headers` (e.g. a
 * CSP) go with every response.
 * @returns {Promise<{origin: string, pages: object, url(p: string): string, close(): Promise<void>}>}
 */
export async function startHost({ pages = {}, folders = {}, headers = {} } = {}) {
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const send = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    if (p === '/favicon.ico') return send(204, 'image/x-icon', '');
    if (Object.hasOwn(pages, p)) return send(200, TYPES['.html'], pages[p]);
    for (const [prefix, dir] of Object.entries(folders)) {
      if (!p.startsWith(prefix)) continue;
      // a folder's URL serves its index.html, as static hosts do
      const file = path.resolve(dir, '.' + p.slice(prefix.length - 1) + (p.endsWith('/') ? 'index.html' : ''));
      if (!file.startsWith(path.resolve(dir) + path.sep)) return send(403, 'text/plain', 'outside');
      fs.readFile(file, (err, data) => (err ? send(404, 'text/plain', 'not found')
        : send(200, TYPES[path.extname(file)] || 'application/octet-stream', data)));
      return undefined;
    }
    return send(404, 'text/plain', 'not found');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    pages,
    url: (p) => origin + p,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
