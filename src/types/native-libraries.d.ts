// Shared libraries imported `with { type: 'file' }`: the import is the file's path (embedded in a compiled binary).
declare module '*.so' {
  const path: string
  export default path
}
