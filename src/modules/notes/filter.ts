import type { Library } from '../library'

export interface NoteFilter {
  updatedAfter?: string
  /** a folder id, or null for the top level */
  folderId?: string | null
  status?: string
  type?: string
  /** tags' name keys (tags/names.ts nameKey): only notes carrying every one */
  tags?: readonly string[]
  /** a search only: notes where the speaker of this name (or label, "Speaker A") said the words */
  speaker?: string
  /** the search's words, for `speaker` (each must be among what that speaker said) */
  speakerWords?: readonly string[]
}

/**
 * A key naming a library and a combination of list filters, for remembering what was read. Absent
 * and null filters must not collide with any real value: they are marked with control characters.
 */
export function filterKey(lib: Library, filter: NoteFilter): string {
  const folder = filter.folderId === undefined ? '\u0000' : filter.folderId === null ? '\u0001' : filter.folderId
  return [lib.accountId, lib.sandbox, folder, filter.status ?? '\u0000', filter.type ?? '\u0000', filter.updatedAfter ?? '\u0000', filter.speaker ?? '\u0000', filter.tags?.join('\u0003') ?? '\u0000'].join('\u0002')
}
