/**
 * What each part of a compiled binary costs, from the real build: the binary's size, the size of its
 * `.bun` ELF section (where `bun build --compile` puts the program; the rest of the file is the Bun
 * runtime), the bundle's metafile (the JavaScript of each package, and which files are embedded as
 * files: inputs of 0 bytes) and the files the build packed. The bytecode and the module table are
 * what remains of the section.
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { BuildMetafile } from 'bun'
import type { PackedFile } from './pack-embedded'

export interface Part { part: string; bytes: number }

/** The size of the named ELF64 section, or null when the file is not ELF64 or has no such section. */
export function elfSectionSize(file: string, name: string): number | null {
  const elf = readFileSync(file)
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) return null
  const sectionsAt = Number(elf.readBigUInt64LE(0x28))
  const entrySize = elf.readUInt16LE(0x3a)
  const count = elf.readUInt16LE(0x3c)
  const names = sectionsAt + elf.readUInt16LE(0x3e) * entrySize
  const namesAt = Number(elf.readBigUInt64LE(names + 0x18))
  for (let i = 0; i < count; i++) {
    const at = sectionsAt + i * entrySize
    const nameAt = namesAt + elf.readUInt32LE(at)
    if (elf.toString('latin1', nameAt, nameAt + name.length + 1) === `${name}\0`) return Number(elf.readBigUInt64LE(at + 0x20))
  }
  return null
}

/** `node_modules/@aws-sdk/client-s3/…` → `@aws-sdk/*`, `node_modules/elysia/…` → `elysia`, `src/…` → `src/` */
function owner(input: string): string {
  const m = /(?:^|\/)node_modules\/(@[^/]+|[^/]+)\//.exec(input)
  if (!m) return input.startsWith('src/') ? 'src/ (notesvc)' : input
  return m[1]!.startsWith('@') ? `${m[1]}/*` : m[1]!
}

const BIG_FILE = 100_000
const JS_ROWS = 8

export function binaryParts(binary: string, root: string, metafile: BuildMetafile, packed: PackedFile[]): Part[] {
  const size = statSync(binary).size
  const section = elfSectionSize(binary, '.bun')
  const parts: Part[] = []
  if (section !== null) parts.push({ part: 'Bun runtime (the binary without its .bun section)', bytes: size - section })

  // JavaScript, by package, summed over the entry points (the main one and the two thread entries)
  const byOwner = new Map<string, number>()
  let js = 0
  for (const output of Object.values(metafile.outputs)) {
    js += output.bytes
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (metafile.inputs[input]?.bytes === 0) continue // an embedded file: only its path is in the JavaScript
      byOwner.set(owner(input), (byOwner.get(owner(input)) ?? 0) + bytesInOutput)
    }
  }
  const owners = [...byOwner].sort((a, b) => b[1] - a[1])
  for (const [name, bytes] of owners.slice(0, JS_ROWS)) parts.push({ part: `JavaScript: ${name}`, bytes })
  const shown = owners.slice(0, JS_ROWS).reduce((n, [, b]) => n + b, 0)
  parts.push({ part: `JavaScript: ${owners.length - JS_ROWS} other packages, and the bundle's glue`, bytes: js - shown })

  // embedded files: packed ones as packed, the others as they are on disk
  const packedBy = new Map(packed.map(p => [p.path, p]))
  let embedded = 0
  let small = { files: 0, bytes: 0 }
  for (const [input, { bytes }] of Object.entries(metafile.inputs)) {
    if (bytes !== 0) continue
    const p = packedBy.get(input)
    const stored = p ? p.packed : statSync(join(root, input)).size
    embedded += stored
    if (p) parts.push({ part: `embedded: ${input} (${p.codec}; ${p.original.toLocaleString('en')} unpacked)`, bytes: stored })
    else if (stored >= BIG_FILE) parts.push({ part: `embedded: ${input}`, bytes: stored })
    else small = { files: small.files + 1, bytes: small.bytes + stored }
  }
  if (small.files > 0) parts.push({ part: `embedded: ${small.files} files under ${BIG_FILE.toLocaleString('en')} bytes (as on disk; Bun stores text that is not Latin-1 as UTF-16)`, bytes: small.bytes })

  const rest = (section ?? size) - js - embedded
  parts.push({ part: section === null ? 'the rest: Bun runtime, bytecode and module table' : 'the rest of .bun: bytecode (--bytecode) and module table', bytes: rest })
  return parts
}

export function partsTable(parts: Part[], total: number): string {
  const width = Math.max(...parts.map(p => p.part.length))
  const line = (part: string, bytes: number) => `  ${part.padEnd(width)}  ${bytes.toLocaleString('en').padStart(12)}`
  return ['what the binary is made of (bytes):', ...parts.map(p => line(p.part, p.bytes)), line('total', total)].join('\n') + '\n'
}
