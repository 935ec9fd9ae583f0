import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3'
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

/**
 * Any S3-compatible store (AWS, MinIO, Ceph, …): presigned PUTs for uploads, streamed reads. The AWS
 * SDK (the largest dependency: about a third of a cold start's module loading) is loaded on first use,
 * so a server on disk storage never loads it and one on S3 answers its first request sooner.
 */
export function createS3Storage(opts: S3Options): MediaStorage {
  let loading: Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3'); getSignedUrl: typeof import('@aws-sdk/s3-request-presigner').getSignedUrl }> | undefined
  const aws = () => (loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([sdk, presigner]) => ({
    sdk,
    getSignedUrl: presigner.getSignedUrl,
    client: new sdk.S3Client({
      region: opts.region ?? 'us-east-1',
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      credentials: opts.credentials,
    }),
  })))
  const Bucket = opts.bucket

  return {
    kind: 's3',

    async uploadTarget(key: string, contentType: string, expiresAt: Date): Promise<UploadTarget> {
      const expiresIn = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000))
      const { client, sdk, getSignedUrl } = await aws()
      const url = await getSignedUrl(client, new sdk.PutObjectCommand({ Bucket, Key: key, ContentType: contentType }), { expiresIn })
      return { url, headers: { 'Content-Type': contentType } }
    },

    async stat(key: string): Promise<StoredObject | null> {
      try {
        const { client, sdk } = await aws()
        const head = await client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }))
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
        const { client, sdk } = await aws()
        const res = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key }))
        await pipeline(res.Body as Readable, createWriteStream(path))
      } catch (err) {
        await rm(dir, { recursive: true, force: true })
        throw err
      }
      return { path, release: () => rm(dir, { recursive: true, force: true }) }
    },

    async read(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array>> {
      const { client, sdk } = await aws()
      const res = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }))
      return (res.Body as { transformToWebStream(): ReadableStream<Uint8Array> }).transformToWebStream()
    },

    async delete(key: string): Promise<void> {
      const { client, sdk } = await aws()
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }))
    },
  }
}
