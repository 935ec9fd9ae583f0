import { create } from 'content-disposition'

/**
 * `Content-Disposition: attachment` for a file named after something a user typed (a note's title):
 * RFC 6266 with the `jshttp/content-disposition` library (the one Express uses), which writes the
 * name as `filename*` (RFC 5987, UTF-8, percent-encoded) and an ASCII `filename` for old clients.
 * The ASCII name is made here rather than by the library's `?` replacement: accents are dropped
 * (`Réunion` → `Reunion`), other non-ASCII characters and quotes become `_`.
 * Path separators and control characters are removed from both, and an empty name becomes `fallback`.
 */
export function attachment(baseName: string, extension: string, fallback: string): string {
  const clean = baseName.replace(/[\u0000-\u001f\u007f/\\]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200) || fallback
  const ascii = clean.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]|["%]/g, '_').trim() || fallback
  return create(`${clean}.${extension}`, { fallback: `${ascii}.${extension}` })
}
