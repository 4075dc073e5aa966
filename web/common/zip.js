// zip.js — writes a .zip archive (PKWARE APPNOTE: local headers, central directory, end record)
// from [{path, data: Uint8Array}], for the SCORM package. Entries are stored, or deflated when
// the caller hands a raw-deflate function (Node's zlib.deflateRawSync); the one kept is the
// smaller. Limits: no ZIP64 (under 4 GB, under 65,535 entries), UTF-8 names, a fixed date.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE) of bytes. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// 2026-01-01 00:00 in MS-DOS time: the same bytes for the same files
const DOS_TIME = 0;
const DOS_DATE = ((2026 - 1980) << 9) | (1 << 5) | 1;

/**
 * The archive's bytes.
 * @param {{path: string, data: Uint8Array}[]} files paths with '/', no leading '/'
 * @param {{deflateRaw?: (b: Uint8Array) => Uint8Array}} [options]
 */
export function zip(files, { deflateRaw } = {}) {
  const enc = new TextEncoder();
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { path, data } of files) {
    const name = enc.encode(path);
    const crc = crc32(data);
    let body = data;
    let method = 0;
    if (deflateRaw && data.length > 64) {
      const d = deflateRaw(data);
      if (d.length < data.length) { body = d; method = 8; }
    }
    // The fields a local header and its central-directory record share, from the version needed
    // on (offset 4 in a local header, 6 in a central record, after its "made by").
    const entry = (view, at) => {
      view.setUint16(at, 20, true);            // version needed: 2.0
      view.setUint16(at + 2, 0x0800, true);    // flags: UTF-8 names
      view.setUint16(at + 4, method, true);
      view.setUint16(at + 6, DOS_TIME, true);
      view.setUint16(at + 8, DOS_DATE, true);
      view.setUint32(at + 10, crc, true);
      view.setUint32(at + 14, body.length, true);
      view.setUint32(at + 18, data.length, true);
      view.setUint16(at + 22, name.length, true);
    };
    const head = new DataView(new ArrayBuffer(30));
    head.setUint32(0, 0x04034b50, true);
    entry(head, 4);
    head.setUint16(28, 0, true);
    locals.push(new Uint8Array(head.buffer), name, body);
    const cen = new DataView(new ArrayBuffer(46));
    cen.setUint32(0, 0x02014b50, true);
    cen.setUint16(4, 20, true);                // made by: 2.0
    entry(cen, 6);
    cen.setUint32(42, offset, true);           // the local header's offset
    centrals.push(new Uint8Array(cen.buffer), name);
    offset += 30 + name.length + body.length;
  }
  const cdSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, files.length, true);
  end.setUint16(10, files.length, true);
  end.setUint32(12, cdSize, true);
  end.setUint32(16, offset, true);
  const parts = [...locals, ...centrals, new Uint8Array(end.buffer)];
  const out = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) { out.set(b, at); at += b.length; }
  return out;
}
