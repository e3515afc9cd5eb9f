/**
 * Reads a QR code as a phone would, with packages of their own: pngjs decodes the PNG (checking its
 * chunk CRCs and zlib stream) and jsQR finds and decodes the symbol in the pixels.
 */
import jsqr from 'jsqr';
import pngjs from 'pngjs';

// A CommonJS module whose `exports.default` is the decoder.
const jsQR = jsqr.default;

/** The text a QR image of RGBA pixels reads as, or null when no symbol is found. */
export function readQr(rgba: Uint8Array, width: number, height: number): string | null {
  const found = jsQR(new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.length), width, height);
  return found ? found.data : null;
}

/** The size of a PNG and the text its QR code reads as (null when none is found). */
export function readQrPng(png: Buffer): { width: number; height: number; text: string | null } {
  const image = pngjs.PNG.sync.read(png);
  return { width: image.width, height: image.height, text: readQr(image.data, image.width, image.height) };
}
