import { dlopen, FFIType, toArrayBuffer, type Pointer } from 'bun:ffi'

/**
 * The WAL-index header mapped into memory through a descriptor that stays open, so that reading it is
 * a copy of 48 bytes instead of a pread(2) (a system call per request: about a tenth of the CPU of the
 * kept first page of notes, bench/README.md "The repeated first page, mapped").
 *
 * Why mmap(2) from libc rather than Bun.mmap: Bun.mmap opens the file and closes its descriptor, and
 * closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's shared
 * lock on the WAL index included (see wal-index.ts). mmap(2) on our own descriptor, never closed,
 * drops nothing. The mapping is safe to read while SQLite holds that shared lock (only a process that
 * takes the lock exclusively, the first to open the database, truncates the file); it is read only
 * while the store's connection is open. SQLite maps the same file itself, in 32 KB regions.
 *
 * Null when libc or mmap is not at hand (another libc, a refused mapping) or the file is shorter than
 * the header: the caller reads with pread(2) as before.
 */
const HEADER_BYTES = 48
const PROT_READ = 1
const MAP_SHARED = 1

type Mmap = (addr: null, length: number, prot: number, flags: number, fd: number, offset: number) => Pointer | null

let mmap: Mmap | null | undefined

function libcMmap(): Mmap | null {
  if (mmap !== undefined) return mmap
  if (process.platform !== 'linux') return (mmap = null)
  try {
    const lib = dlopen('libc.so.6', { mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr } })
    return (mmap = lib.symbols.mmap as unknown as Mmap)
  } catch {
    return (mmap = null)
  }
}

export function mappedHeader(fd: number, fileBytes: number): Uint32Array | null {
  if (fileBytes < HEADER_BYTES) return null
  const map = libcMmap()
  if (map === null) return null
  const at = map(null, HEADER_BYTES, PROT_READ, MAP_SHARED, fd, 0)
  // MAP_FAILED is (void *) -1: as a number, 2^64 - 1 rounded; no x86-64 or arm64 user address is past 2^48
  if (at === null || (at as number) <= 0 || (at as number) >= 2 ** 48) return null
  return new Uint32Array(toArrayBuffer(at, 0, HEADER_BYTES))
}
