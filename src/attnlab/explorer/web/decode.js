// attnlab attention explorer, part 0: compact matrices back into numbers, before any other
// part reads the data. A large page carries its matrices as {"enc": "f16", "shape", "b64"}
// (little-endian float16, row-major; with "tri": "lower" only the lower triangle, row by
// row) or {"enc": "u8", "shape", "scale", "offset", "b64"} (value = offset + scale * byte);
// the formats and their precision: attnlab.explorer.page.encoding. decodeData returns plain data
// as it is, so it may be applied to any data (the server's answers are plain).

function base64Bytes(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

// IEEE 754 half precision: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits
function halfToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24; // zero and subnormals
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function decodeMatrix(obj) {
  const [rows, cols] = obj.shape;
  const bytes = base64Bytes(obj.b64);
  let next;
  if (obj.enc === "u8") {
    let i = 0;
    next = () => obj.offset + obj.scale * bytes[i++];
  } else if (obj.enc === "f16") {
    const view = new DataView(bytes.buffer);
    let i = 0;
    next = () => halfToNumber(view.getUint16(2 * i++, true));
  } else {
    throw new Error(`unknown matrix encoding ${obj.enc}`);
  }
  const lower = obj.tri === "lower";
  const out = new Array(rows);
  for (let r = 0; r < rows; r += 1) {
    const row = new Array(cols);
    for (let c = 0; c < cols; c += 1) row[c] = lower && c > r ? 0 : next();
    out[r] = row;
  }
  return out;
}

function decodeData(value) {
  if (Array.isArray(value)) {
    // a row of numbers holds nothing encoded: leave it (and its siblings) as they are
    if (value.length && typeof value[0] === "number") return value;
    for (let i = 0; i < value.length; i += 1) value[i] = decodeData(value[i]);
    return value;
  }
  if (value && typeof value === "object") {
    if (typeof value.enc === "string" && Array.isArray(value.shape)) return decodeMatrix(value);
    for (const key of Object.keys(value)) value[key] = decodeData(value[key]);
  }
  return value;
}

// The page's own data, decoded where it lies, so part 1 (core) reads plain numbers.
if (typeof document !== "undefined") {
  const node = document.getElementById("attnlab-data");
  if (node && node.textContent.includes('"enc":')) {
    node.textContent = JSON.stringify(decodeData(JSON.parse(node.textContent)));
  }
}
