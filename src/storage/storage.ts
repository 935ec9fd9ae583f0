/**
 * Where media files live: on disk under the data folder, or in an S3-compatible bucket. Keys are
 * relative paths such as `uploads/<noteId>`.
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

export interface MediaStorage {
  readonly kind: 'disk' | 's3'
  /** the URL the client PUTs the file to, valid until `expiresAt` */
  uploadTarget(key: string, contentType: string, expiresAt: Date): Promise<UploadTarget>
  /** size of the stored object, or null when nothing is stored under `key` */
  stat(key: string): Promise<StoredObject | null>
  /** a file on this machine with the object's bytes, for ffmpeg and the WAV reader */
  localCopy(key: string): Promise<LocalCopy>
  /** the object's bytes from `start` to `end` inclusive (the whole object without a range), for playing it back */
  read(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array> | Blob>
  /** removes the object; nothing happens when there is none */
  delete(key: string): Promise<void>
}

/** The upload is bigger than it may be; the message says the limit. */
export class TooLargeError extends Error {}
