// Files imported `with { type: 'text' }` arrive as their contents.
declare module '*/standalone.js' {
  const text: string
  export default text
}
declare module '*/assets/library.js' {
  const text: string
  export default text
}
declare module '*/assets/library.css' {
  const text: string
  export default text
}
