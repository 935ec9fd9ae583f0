import type { Env } from '../environment'

/**
 * Where media files live. Keys are relative paths such as `uploads/<noteId>`. What differs between
 * back ends is said by the interface (capabilities), never asked by name: whether the storage
 * receives the upload PUT itself, how partial writes are reclaimed, which origins a browser PUTs to;
 * and, by its registration (StorageBackend), how it is configured, checked and backed up.
 */
export interface UploadTarget {
  url: string
  headers: Record<string, string>
}

export interface StoredObject {
  size: number
}

export interface LocalCopy {
  path: string
  /** removes the copy when it was made for the caller (S3); leaves disk files alone */
  release(): Promise<void>
}

/** A temporary file a write left behind (the process died mid-upload), and the key it was writing. */
export interface PartialWrite {
  key: string
  path: string
  bytes: number
  modifiedAt: Date
}

/** The body of an upload PUT, streamed. */
export type UploadBody = AsyncIterable<Uint8Array> | Iterable<Uint8Array> | ReadableStream<Uint8Array>

export interface MediaStorage {
  /** its NOTESVC_STORAGE name */
  readonly name: string
  /**
   * the URL the client PUTs the file to, valid until `expiresAt`, counted from `now` (the caller's
   * clock; a presigned URL's lifetime is expiresAt - now, whatever this machine's clock says)
   */
  uploadTarget(key: string, contentType: string, expiresAt: Date, now?: Date): Promise<UploadTarget>
  /**
   * Present when this server receives the upload PUT itself (the signed target of `uploadTarget`):
   * streams `body` to `key` within `maxBytes`, all or nothing. Absent when the client PUTs to the
   * store directly (presigned URLs).
   */
  readonly receiveUpload?: (key: string, body: UploadBody, maxBytes: number, declaredLength?: number) => Promise<number>
  /** Origins a browser PUTs uploads to besides this server (the library page's CSP and the store's CORS). */
  readonly browserOrigins: readonly string[]
  /** The partial files writes left behind (a process killed mid-upload); none where a write is atomic in the store. */
  partialWrites(): Promise<PartialWrite[]>
  removePartialWrite(write: PartialWrite): Promise<void>
  /** size of the stored object, or null when nothing is stored under `key` */
  stat(key: string): Promise<StoredObject | null>
  /** a file on this machine with the object's bytes, for ffmpeg and the WAV reader */
  localCopy(key: string): Promise<LocalCopy>
  /** the object's bytes from `start` to `end` inclusive (the whole object without a range), for playing it back */
  read(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array> | Blob>
  /**
   * Stores `body` (bytes, or the file at `path` on this machine) under `key`, whole or not at all,
   * replacing what was there: a live stream's audio parts and the recording made from them.
   */
  put(key: string, body: Uint8Array | { path: string }): Promise<void>
  /** removes the object; nothing happens when there is none */
  delete(key: string): Promise<void>
}

/** What a storage is opened with: the data folder, the public URL and the upload signing key. */
export interface StoragePlace {
  dataDir: string
  publicUrl: string
  /** the key upload URLs are signed with (kept in the database, read when first needed) */
  uploadSecret: () => Promise<string>
}

/** How `notesvc backup` treats the media of a storage. */
export type MediaBackup =
  /** copied into the backup: each key's file on this machine (`folder` holds them all; restore writes there) */
  | { copied: true; folder: string; fileOf(key: string): string }
  /** left where they are: `leftIn` says where (a sentence), `advice` how to protect them, `manifest` what the manifest records */
  | { copied: false; leftIn: string; advice: string; manifest: Record<string, string> }

/** doctor's line on the storage: usable as configured or not, and what fixes it. */
export interface StorageCheck {
  ok: boolean
  /** works, but not as the configuration seems to intend */
  warn?: boolean
  detail: string
  fix?: string
}

/**
 * A storage back end as it registers under its NOTESVC_STORAGE name (src/storage/index.ts): it parses
 * its own variables, opens the storage, says how doctor checks it and how a backup treats its media.
 */
export interface StorageBackend<Settings> {
  readonly name: string
  /** the environment variables it reads (besides NOTESVC_STORAGE), for flags and the docs */
  readonly variables: readonly string[]
  /** whether several machines see the same files (the nodes and workers of a PostgreSQL installation need it) */
  readonly sharedByMachines: boolean
  /** how to set it up for several machines, after `NOTESVC_STORAGE=<name> with` (for doctor's advice) */
  readonly setup?: string
  /** its settings from the environment; a malformed value throws ConfigError, a missing one is doctor's to report */
  settings(env: Env): Settings
  /** the storage; throws when the settings cannot work (the message says what to set) */
  open(settings: Settings, place: StoragePlace): MediaStorage
  check(settings: Settings, place: { dataDir: string; sharedDatabase: boolean }): StorageCheck
  backup(settings: Settings, dataDir: string): MediaBackup
}

/** The upload is bigger than it may be; the message says the limit. */
export class TooLargeError extends Error {}
