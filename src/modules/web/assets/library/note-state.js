// What the note page's modules share: the note as last read, its transcript's segments (each with its
// words), speakers and version (the transcript's ETag, sent back as If-Match), and the player.
export const noteState = {
  note: null,
  segments: [],
  speakers: [],
  speakerFilter: '',
  player: null,
  current: -1,
  /** the transcript's version as last read or written; null before it is read */
  version: null,
}

const noteId = () => document.body.dataset.noteId
export const notePath = (rest = '') => `/v1/notes/${encodeURIComponent(noteId())}${rest}`
export const say = text => { document.getElementById('action-status').textContent = text }
