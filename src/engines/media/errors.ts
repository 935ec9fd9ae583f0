/** The file is not media we can read (corrupt, truncated, not audio). */
export class MediaUnreadableError extends Error {}
/** A program the media path needs (ffmpeg, ffprobe) is not installed. */
export class MediaToolMissingError extends Error {}
