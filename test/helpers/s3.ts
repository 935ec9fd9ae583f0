import S3rver from 's3rver'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createS3Storage } from '../../src/storage/s3'

/** A real S3-protocol server (s3rver) on loopback with one bucket, and a storage client for it. */
export async function startS3(bucket = 'notesvc') {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-s3rver-'))
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket, configs: [] }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    storage: () => createS3Storage({ bucket, endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }),
    async close() {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
