// web-server.mjs — the static server of web/ that scripts/serve, the Playwright tests and the
// browser benchmarks use: http-server (from node_modules) without caching, plus one thing a
// plain static host does not do: under /isolated/ it serves the same files with the headers that
// make a page cross-origin isolated (COOP same-origin, COEP require-corp, CORP same-origin), so
// /isolated/train/ is the training page on wasm threads (SharedArrayBuffer) and /train/ the same
// page on plain workers, as a static host serves it. Everything outside /isolated/ is served as
// before (no isolation headers: the cross-origin iframe embeds keep working).
//
//   node scripts/web-server.mjs [--port 8080] [--root web] [--host 127.0.0.1]
//   import { serveWeb } from './web-server.mjs'; const { server, url } = await serveWeb({ port: 0 })
//
// Limits: loopback by default; no TLS (127.0.0.1 and localhost are secure contexts anyway).
import httpServer from 'http-server';
import { fileURLToPath } from 'node:url';
import { writePages } from './pages.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ISOLATED = '/isolated';

/** Headers of a cross-origin isolated response. */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function isolate(req, res) {
  if (req.url === ISOLATED || req.url.startsWith(`${ISOLATED}/`) || req.url.startsWith(`${ISOLATED}?`)) {
    req.url = req.url.slice(ISOLATED.length) || '/';
    if (req.url.startsWith('?')) req.url = `/${req.url}`;
    for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v);
  }
  res.emit('next');
}

/** Writes the pages (scripts/pages.mjs) and starts serving; resolves to {server, url} once it listens (port 0: a free one). */
export async function serveWeb({ port = 8080, host = '127.0.0.1', root = 'web' } = {}) {
  if (root === 'web') await writePages();
  const server = httpServer.createServer({ root: new URL(root, `file://${ROOT}`).pathname, cache: -1, before: [isolate] });
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => resolve({ server, url: `http://${host}:${server.server.address().port}` }));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name, def) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : def;
  };
  const { url } = await serveWeb({ port: Number(arg('port', 8080)), host: arg('host', '127.0.0.1'), root: arg('root', 'web') });
  console.log(`serving web/ at ${url}/ (cross-origin isolated under ${url}${ISOLATED}/)`);
}
