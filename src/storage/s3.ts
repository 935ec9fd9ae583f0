import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { LocalCopy, MediaStorage, StoredObject, UploadTarget } from './storage'

export interface S3Options {
  bucket: string
  endpoint?: string
  region?: string
  forcePathStyle: boolean
  /** credentials come from the usual AWS_* variables unless given */
  credentials?: S3ClientConfig['credentials']
}

/** Any S3-compatible store (AWS, MinIO, Ceph, …): presigned PUTs for uploads, streamed reads. */
export function createS3Storage(opts: S3Options): MediaStorage {
  const client = new S3Client({
    region: opts.region ?? 'us-east-1',
    endpoint: opts.endpoint,
    forcePathStyle: opts.forcePathStyle,
    credentials: opts.credentials,
  })
  const Bucket = opts.bucket

  return {
    kind: 's3',

    async uploadTarget(key: string, contentType: string, expiresAt: Date): Promise<UploadTarget> {
      const expiresIn = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000))
      const url = await getSignedUrl(client, new PutObjectCommand({ Bucket, Key: key, ContentType: contentType }), { expiresIn })
      return { url, headers: { 'Content-Type': contentType } }
    },

    async stat(key: string): Promise<StoredObject | null> {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: key }))
        return { size: head.ContentLength ?? 0 }
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
        if (status === 404 || (err as Error).name === 'NotFound' || (err as Error).name === 'NoSuchKey') return null
        throw err
      }
    },

    async localCopy(key: string): Promise<LocalCopy> {
      const dir = await mkdtemp(join(tmpdir(), 'notesvc-media-'))
      const path = join(dir, 'media')
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key }))
        await pipeline(res.Body as Readable, createWriteStream(path))
      } catch (err) {
        await rm(dir, { recursive: true, force: true })
        throw err
      }
      return { path, release: () => rm(dir, { recursive: true, force: true }) }
    },

    async read(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array>> {
      const res = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }))
      return (res.Body as { transformToWebStream(): ReadableStream<Uint8Array> }).transformToWebStream()
    },

    async delete(key: string): Promise<void> {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }))
    },
  }
}
