import { ApiError } from '../../http/errors'
import { MAX_TAG_NAME } from './model'

// control characters (C0, DEL, C1) and the line and paragraph separators: a tag name is one short line
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** A tag name as stored: trimmed, NFC; a clear 400 when it is empty, too long or holds a control character. */
export function tagName(raw: string, field = 'name'): string {
  const name = raw.normalize('NFC').trim()
  const bad = (issue: string) => new ApiError('invalid_request', `A tag name ${issue}: send 1 to ${MAX_TAG_NAME} characters of one line, such as "budget".`, { details: [{ field, issue }] })
  if (name === '') throw bad('is empty')
  if (CONTROL.test(name)) throw bad('holds a control character (NUL, a line break, …)')
  if ([...name].length > MAX_TAG_NAME) throw bad(`is longer than ${MAX_TAG_NAME} characters`)
  return name
}

/** What names are compared by (unique per library, the tag= filter): the name lower-cased, for every script. */
export const nameKey = (name: string) => name.normalize('NFC').trim().toLowerCase()

/** Colours a new tag gets when none is given: distinct at a glance, readable under white text. */
const PALETTE = ['#2f6fdf', '#d9480f', '#2b8a3e', '#ae3ec9', '#c92a2a', '#0b7285', '#e67700', '#5f3dc4', '#087f5b', '#a61e4d']

/** The palette's colour for a name: the same name gets the same colour in every library. */
export function defaultColor(name: string): string {
  let h = 0
  for (const ch of nameKey(name)) h = (h * 31 + ch.codePointAt(0)!) >>> 0
  return PALETTE[h % PALETTE.length]!
}
