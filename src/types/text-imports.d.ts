// The API reference's script, imported `with { type: 'file' }`: the import is the file's path.
declare module '*/standalone.js' {
  const path: string
  export default path
}
// Files imported `with { type: 'text' }` arrive as their contents.
declare module '*/assets/library.css' {
  const text: string
  export default text
}
// The stylesheets of the pages (src/modules/web/assets/pages.css) and of OAuth's (src/modules/oauth/assets/pages.css).
declare module '*/assets/pages.css' { const text: string; export default text }
// The web library's script modules (src/modules/web/assets/library/), imported by library.ts.
declare module '*/assets/library/add.js' { const text: string; export default text }
declare module '*/assets/library/ask.js' { const text: string; export default text }
declare module '*/assets/library/api.js' { const text: string; export default text }
declare module '*/assets/library/dom.js' { const text: string; export default text }
declare module '*/assets/library/downloads.js' { const text: string; export default text }
declare module '*/assets/library/findreplace.js' { const text: string; export default text }
declare module '*/assets/library/folders.js' { const text: string; export default text }
declare module '*/assets/library/history.js' { const text: string; export default text }
declare module '*/assets/library/list.js' { const text: string; export default text }
declare module '*/assets/library/main.js' { const text: string; export default text }
declare module '*/assets/library/note.js' { const text: string; export default text }
declare module '*/assets/library/note-state.js' { const text: string; export default text }
declare module '*/assets/library/resummarize.js' { const text: string; export default text }
declare module '*/assets/library/speakers.js' { const text: string; export default text }
declare module '*/assets/library/status.js' { const text: string; export default text }
declare module '*/assets/library/suggestions.js' { const text: string; export default text }
declare module '*/assets/library/summary.js' { const text: string; export default text }
declare module '*/assets/library/tags.js' { const text: string; export default text }
declare module '*/assets/library/transcript.js' { const text: string; export default text }
declare module '*/assets/library/workspace.js' { const text: string; export default text }
declare module '*/assets/library/share.js' { const text: string; export default text }
declare module '*/assets/library/pcm.js' { const text: string; export default text }
declare module '*/assets/library/record.js' { const text: string; export default text }
declare module '*/assets/library/record-audio.js' { const text: string; export default text }
declare module '*/assets/library/record-stream.js' { const text: string; export default text }
declare module '*/assets/library/record-worklet.js' { const text: string; export default text }
// The share page's stylesheet and script (src/modules/sharing/assets/), imported by page.ts.
declare module '*/assets/share.css' { const text: string; export default text }
declare module '*/assets/share.js' { const text: string; export default text }
