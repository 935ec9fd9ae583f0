import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { flag } from '../environment'
import type { LocalCopy, MediaStorage, StorageBackend, StoredObject, UploadTarget } from './storage'

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
    name: 's3',
    // the browser PUTs to the bucket's endpoint (or AWS's), which the library page's CSP must allow
    browserOrigins: [opts.endpoint ? new URL(opts.endpoint).origin : 'https://*.amazonaws.com'],
    // a PUT to S3 is stored whole or not at all: nothing partial is left to reclaim
    partialWrites: async () => [],
    removePartialWrite: async () => {},

    async uploadTarget(key: string, contentType: string, expiresAt: Date, now = new Date()): Promise<UploadTarget> {
      const expiresIn = Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 1000))
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
        // node:stream/promises loaded here, not at start (the streams cost milliseconds of every cold start)
        const { pipeline } = await import('node:stream/promises')
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

    async put(key: string, body: Uint8Array | { path: string }): Promise<void> {
      const { client, sdk } = await aws()
      if (body instanceof Uint8Array) {
        await client.send(new sdk.PutObjectCommand({ Bucket, Key: key, Body: body, ContentLength: body.length }))
        return
      }
      // A file goes as the body of a PUT to a presigned URL, which Bun streams from the disk with its
      // length: the SDK given a Node stream sent it in a framing s3rver stored as the object's bytes.
      const { getSignedUrl } = await aws()
      const url = await getSignedUrl(client, new sdk.PutObjectCommand({ Bucket, Key: key }), { expiresIn: 3600 })
      const res = await fetch(url, { method: 'PUT', body: Bun.file(body.path) })
      if (!res.ok) throw new Error(`the S3 store answered ${res.status} to storing ${key}: ${(await res.text()).slice(0, 200)}`)
    },

    async delete(key: string): Promise<void> {
      const { client, sdk } = await aws()
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }))
    },
  }
}

/** What NOTESVC_S3_* say; the bucket is required to open it (doctor reports it missing). */
interface S3Settings {
  bucket?: string
  endpoint?: string
  region?: string
  forcePathStyle: boolean
}

const S3_SETUP = 'NOTESVC_S3_BUCKET (and NOTESVC_S3_ENDPOINT for MinIO or another S3-compatible store)'

/** `NOTESVC_STORAGE=s3`: a bucket every node and worker shares; credentials from the usual AWS_* variables. */
export const s3Backend: StorageBackend<S3Settings> = {
  name: 's3',
  variables: ['NOTESVC_S3_BUCKET', 'NOTESVC_S3_ENDPOINT', 'NOTESVC_S3_REGION', 'NOTESVC_S3_FORCE_PATH_STYLE'],
  sharedByMachines: true,
  setup: S3_SETUP,
  settings: env => ({
    bucket: env.NOTESVC_S3_BUCKET || undefined,
    endpoint: env.NOTESVC_S3_ENDPOINT || undefined,
    region: env.NOTESVC_S3_REGION || undefined,
    forcePathStyle: flag(env.NOTESVC_S3_FORCE_PATH_STYLE),
  }),
  open(s) {
    if (!s.bucket) throw new Error('NOTESVC_STORAGE=s3 needs NOTESVC_S3_BUCKET (and NOTESVC_S3_ENDPOINT for MinIO or other S3-compatible stores)')
    return createS3Storage({ bucket: s.bucket, endpoint: s.endpoint, region: s.region, forcePathStyle: s.forcePathStyle })
  },
  check: s => s.bucket
    ? { ok: true, detail: `s3 bucket ${s.bucket}${s.endpoint ? ` at ${s.endpoint}` : ''}` }
    : { ok: false, detail: 's3 selected but NOTESVC_S3_BUCKET is not set', fix: 'set NOTESVC_S3_BUCKET (and NOTESVC_S3_ENDPOINT for MinIO or other S3-compatible stores)' },
  backup: s => ({
    copied: false,
    leftIn: `the S3 bucket ${s.bucket ?? ''}`,
    advice: "protect them with the bucket's versioning or replication",
    manifest: s.bucket ? { bucket: s.bucket } : {} as Record<string, string>,
  }),
}
