// node-webvtt ships no types (its package.json names a types.d.ts it does not publish); the tests use its parser.
declare module 'node-webvtt' {
  export interface ParsedCue {
    identifier: string
    /** seconds */
    start: number
    end: number
    text: string
    styles: string
  }
  export function parse(input: string, options?: { strict?: boolean; meta?: boolean }): { valid: boolean; cues: ParsedCue[]; errors: unknown[] }
}
