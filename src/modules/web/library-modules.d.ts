// The library's script modules, imported `with { type: 'text' }` by library.ts, arrive as their text.
declare module '*/assets/library/add.js' { const text: string; export default text }
declare module '*/assets/library/api.js' { const text: string; export default text }
declare module '*/assets/library/dom.js' { const text: string; export default text }
declare module '*/assets/library/folders.js' { const text: string; export default text }
declare module '*/assets/library/list.js' { const text: string; export default text }
declare module '*/assets/library/main.js' { const text: string; export default text }
declare module '*/assets/library/note.js' { const text: string; export default text }
declare module '*/assets/library/status.js' { const text: string; export default text }
declare module '*/assets/library/summary.js' { const text: string; export default text }
