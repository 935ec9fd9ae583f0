import { join } from 'node:path'
import type { Config } from '../config'
import { createDiskStorage } from './disk'
import { createS3Storage } from './s3'
import type { MediaStorage } from './storage'

/** The storage NOTESVC_STORAGE names: disk under the data folder (default), or an S3 bucket. */
export function createStorage(config: Config, uploadSecret: () => Promise<string>): MediaStorage {
  if (config.storage === 's3') {
    if (!config.s3.bucket) throw new Error('NOTESVC_STORAGE=s3 needs NOTESVC_S3_BUCKET (and NOTESVC_S3_ENDPOINT for MinIO or other S3-compatible stores)')
    return createS3Storage({ bucket: config.s3.bucket, endpoint: config.s3.endpoint, region: config.s3.region, forcePathStyle: config.s3.forcePathStyle })
  }
  return createDiskStorage({ root: join(config.dataDir, 'media'), publicUrl: config.publicUrl, secret: uploadSecret })
}
