// The record button's AudioWorklet (loaded by record-audio.js from /assets/record-worklet.js, its own
// bundle: a worklet runs in its own scope). It turns the microphone's (and a shared tab's) mixed mono
// samples into 24 kHz pcm16 and posts them every 100 ms with their level; on 'flush' it posts what it
// holds. It sends nothing itself: the page decides what goes on the stream (nothing while paused).
import { createPcmEncoder, levelOf, STREAM_RATE } from './pcm.js'

const CHUNK = STREAM_RATE / 10

class PcmProcessor extends AudioWorkletProcessor {
  constructor() {
    super()
    // `sampleRate`: the context's rate, a global of the worklet's scope
    this.encode = createPcmEncoder(sampleRate)
    this.chunk = new Int16Array(CHUNK)
    this.filled = 0
    this.port.onmessage = e => { if (e.data === 'flush') this.post(true) }
  }

  /** the samples held; on a flush, posted even when there are none, marked `flushed` */
  post(flushed = false) {
    if (!this.filled && !flushed) return
    const pcm = this.chunk.slice(0, this.filled)
    this.filled = 0
    this.port.postMessage({ pcm, level: levelOf(pcm), flushed }, [pcm.buffer])
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0]
    if (!channel) return true
    const out = this.encode(channel)
    for (let i = 0; i < out.length;) {
      const n = Math.min(out.length - i, CHUNK - this.filled)
      this.chunk.set(out.subarray(i, i + n), this.filled)
      this.filled += n
      i += n
      if (this.filled === CHUNK) this.post()
    }
    return true
  }
}

registerProcessor('notesvc-pcm', PcmProcessor)
