import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { parseClientFrame, serverEvents } from '../../../src/modules/live/protocol'

// Bounds from docs/realtime.md, written here as data (not imported from the module under test).
const FRAME_LIMIT = 1024 * 1024

function refusal(frame: unknown) {
  const parsed = parseClientFrame(frame)
  if (parsed.ok) throw new Error(`expected a refusal, got ${JSON.stringify(parsed.event)}`)
  return parsed.error
}

function accepted(frame: unknown) {
  const parsed = parseClientFrame(frame)
  if (!parsed.ok) throw new Error(`expected an event, got ${JSON.stringify(parsed.error)}`)
  return parsed.event
}

describe('client events notesvc accepts', () => {
  test('GA session.update: pcm at 24 kHz, a transcription language and server_vad with its three settings', () => {
    const event = accepted(JSON.stringify({
      type: 'session.update',
      event_id: 'evt_1',
      session: {
        type: 'transcription',
        audio: {
          input: {
            format: { type: 'audio/pcm', rate: 24000 },
            transcription: { model: 'gpt-4o-transcribe', language: 'en', prompt: 'A reading of a novel.' },
            turn_detection: { type: 'server_vad', threshold: 0.6, prefix_padding_ms: 200, silence_duration_ms: 700 },
            noise_reduction: { type: 'near_field' },
          },
        },
      },
    }))
    expect(event).toEqual({
      type: 'session.update',
      eventId: 'evt_1',
      config: {
        sampleRate: 24000,
        model: 'gpt-4o-transcribe',
        language: 'en',
        prompt: 'A reading of a novel.',
        turnDetection: { type: 'server_vad', threshold: 0.6, prefixPaddingMs: 200, silenceDurationMs: 700 },
      },
    })
  })

  test('beta transcription_session.update: pcm16, input_audio_transcription, turn_detection null (client commits)', () => {
    const event = accepted(JSON.stringify({
      type: 'transcription_session.update',
      session: { input_audio_format: 'pcm16', input_audio_transcription: { model: 'whisper-1', language: 'de' }, turn_detection: null },
    }))
    expect(event).toEqual({
      type: 'transcription_session.update',
      eventId: null,
      config: { sampleRate: 24000, model: 'whisper-1', language: 'de', prompt: null, turnDetection: null },
    })
  })

  test('an update names only what changes: OpenAI\'s defaults stay for the rest, and 16 kHz is accepted', () => {
    const event = accepted(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 }, turn_detection: { threshold: 0.3 } } } } }))
    expect(event).toMatchObject({ config: { sampleRate: 16000, language: null, turnDetection: { type: 'server_vad', threshold: 0.3, prefixPaddingMs: 300, silenceDurationMs: 500 } } })
  })

  test('append decodes base64 into the PCM bytes sent', () => {
    const samples = new Int16Array([0, 1, -1, 32767, -32768])
    const audio = Buffer.from(samples.buffer).toString('base64')
    const event = accepted(JSON.stringify({ type: 'input_audio_buffer.append', audio }))
    expect(event.type).toBe('input_audio_buffer.append')
    const pcm = (event as { pcm: Uint8Array }).pcm
    expect(Array.from(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength / 2))).toEqual([0, 1, -1, 32767, -32768])
  })

  test('commit and clear carry their event_id', () => {
    expect(accepted('{"type":"input_audio_buffer.commit","event_id":"c1"}')).toEqual({ type: 'input_audio_buffer.commit', eventId: 'c1' })
    expect(accepted('{"type":"input_audio_buffer.clear"}')).toEqual({ type: 'input_audio_buffer.clear', eventId: null })
  })
})

describe('bad events become the protocol\'s error (invalid_request_error with param and event_id)', () => {
  const cases: Array<{ name: string; frame: unknown; code: string; param: string | null; eventId?: string }> = [
    { name: 'not JSON', frame: '{"type":', code: 'invalid_json', param: null },
    { name: 'a JSON array', frame: '[1,2]', code: 'invalid_json', param: null },
    { name: 'a JSON string', frame: '"session.update"', code: 'invalid_json', param: null },
    { name: 'no type', frame: '{"event_id":"e9"}', code: 'missing_required_parameter', param: 'type', eventId: 'e9' },
    { name: 'type is a number', frame: '{"type":7}', code: 'missing_required_parameter', param: 'type' },
    { name: 'a conversation event', frame: '{"type":"response.create","event_id":"r1"}', code: 'unknown_event', param: 'type', eventId: 'r1' },
    { name: 'event_id an object', frame: '{"type":"input_audio_buffer.commit","event_id":{"a":1}}', code: 'invalid_value', param: 'event_id' },
    { name: 'audio missing', frame: '{"type":"input_audio_buffer.append","event_id":"a1"}', code: 'invalid_type', param: 'audio', eventId: 'a1' },
    { name: 'audio a number', frame: '{"type":"input_audio_buffer.append","audio":12}', code: 'invalid_type', param: 'audio' },
    { name: 'audio not base64', frame: '{"type":"input_audio_buffer.append","audio":"%%%%"}', code: 'invalid_value', param: 'audio' },
    { name: 'audio base64 without padding', frame: '{"type":"input_audio_buffer.append","audio":"AAE"}', code: 'invalid_value', param: 'audio' },
    { name: 'audio an odd number of bytes', frame: '{"type":"input_audio_buffer.append","audio":"AAEC"}', code: 'invalid_value', param: 'audio' },
    { name: 'session missing', frame: '{"type":"session.update"}', code: 'invalid_type', param: 'session' },
    { name: 'session.type missing', frame: '{"type":"session.update","session":{}}', code: 'missing_required_parameter', param: 'session.type' },
    { name: 'a conversation session', frame: '{"type":"session.update","session":{"type":"realtime"}}', code: 'invalid_value', param: 'session.type' },
    { name: 'G.711 audio', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"format":{"type":"audio/pcmu"}}}}}', code: 'invalid_value', param: 'session.audio.input.format.type' },
    { name: 'an unsupported rate', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"format":{"type":"audio/pcm","rate":44100}}}}}', code: 'invalid_value', param: 'session.audio.input.format.rate' },
    { name: 'semantic_vad', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"turn_detection":{"type":"semantic_vad"}}}}}', code: 'invalid_value', param: 'session.audio.input.turn_detection.type' },
    { name: 'threshold above 1', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"turn_detection":{"threshold":1.5}}}}}', code: 'invalid_value', param: 'session.audio.input.turn_detection.threshold' },
    { name: 'silence a string', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"turn_detection":{"silence_duration_ms":"500"}}}}}', code: 'invalid_type', param: 'session.audio.input.turn_detection.silence_duration_ms' },
    { name: 'padding a fraction', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"turn_detection":{"prefix_padding_ms":2.5}}}}}', code: 'invalid_type', param: 'session.audio.input.turn_detection.prefix_padding_ms' },
    { name: 'language not a code', frame: '{"type":"session.update","session":{"type":"transcription","audio":{"input":{"transcription":{"language":"English please"}}}}}', code: 'invalid_value', param: 'session.audio.input.transcription.language' },
    { name: 'audio an array', frame: '{"type":"session.update","session":{"type":"transcription","audio":[1]}}', code: 'invalid_type', param: 'session.audio' },
    { name: 'beta g711', frame: '{"type":"transcription_session.update","session":{"input_audio_format":"g711_ulaw"}}', code: 'invalid_value', param: 'session.input_audio_format' },
    { name: 'beta prompt too long', frame: JSON.stringify({ type: 'transcription_session.update', session: { input_audio_transcription: { prompt: 'p'.repeat(4001) } } }), code: 'invalid_value', param: 'session.input_audio_transcription.prompt' },
    { name: 'a binary frame', frame: new Uint8Array([123, 125]), code: 'invalid_frame', param: null },
  ]
  for (const c of cases) {
    test(c.name, () => {
      const error = refusal(c.frame)
      expect(error).toMatchObject({ type: 'invalid_request_error', code: c.code, param: c.param, event_id: c.eventId ?? null })
      expect(error.message.length).toBeGreaterThan(20)
    })
  }
})

describe('hostile frames: bounded, and never a throw', () => {
  test('a frame one byte over 1 MiB is refused as frame_too_large, one at the limit is read', () => {
    const envelope = '{"type":"input_audio_buffer.append","audio":""}'
    const fill = FRAME_LIMIT - envelope.length
    const atLimit = `{"type":"input_audio_buffer.append","audio":"${'A'.repeat(fill - (fill % 4))}"}`
    expect(atLimit.length).toBeLessThanOrEqual(FRAME_LIMIT)
    expect(accepted(atLimit).type).toBe('input_audio_buffer.append')
    const over = `{"type":"input_audio_buffer.append","audio":"${'A'.repeat(fill + 4)}"}`
    expect(refusal(over).code).toBe('frame_too_large')
  })

  test('multi-byte text is measured in UTF-8 bytes, not characters', () => {
    const prompt = 'é'.repeat(FRAME_LIMIT / 2 + 10) // under the limit in characters, over it in bytes
    expect(refusal(JSON.stringify({ type: 'session.update', session: { type: 'transcription' }, junk: prompt })).code).toBe('frame_too_large')
  })

  test('deeply nested junk and a huge unknown type are errors, not throws', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000)
    expect(refusal(deep).code).toBe('invalid_json') // 400 kB: under the frame limit, so JSON.parse reads (or overflows) and it is still an error event
    const nested = '{"type":"session.update","session":' + '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000) + '}'
    expect(['invalid_json', 'missing_required_parameter']).toContain(refusal(nested).code)
    const error = refusal(JSON.stringify({ type: 'x'.repeat(100_000) }))
    expect(error.code).toBe('unknown_event')
    expect(error.message.length).toBeLessThan(400)
  })

  test('no value a client can send makes the parser throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ type: 'session.update', session: v })),
        fc.jsonValue().map((v) => JSON.stringify({ type: 'transcription_session.update', session: { turn_detection: v, input_audio_transcription: v } })),
        fc.jsonValue().map((v) => JSON.stringify({ type: 'input_audio_buffer.append', audio: v, event_id: v }))), (frame) => {
        const parsed = parseClientFrame(frame)
        if (!parsed.ok) expect(parsed.error.type).toBe('invalid_request_error')
      }),
      { numRuns: 2000 },
    )
  })
})

describe('server events', () => {
  let n = 0
  const events = serverEvents((prefix) => `${prefix}_${++n}`)
  const config = { sampleRate: 24000 as const, model: null, language: 'en', prompt: null, turnDetection: { type: 'server_vad' as const, threshold: 0.5, prefixPaddingMs: 300, silenceDurationMs: 500 } }

  test('session.created shows the session in OpenAI\'s GA shape', () => {
    expect(events.sessionCreated('sess_1', config)).toEqual({
      type: 'session.created',
      event_id: expect.stringMatching(/^event_/),
      session: {
        type: 'transcription', object: 'realtime.transcription_session', id: 'sess_1', include: null,
        audio: { input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: { model: null, language: 'en', prompt: null },
          turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
          noise_reduction: null,
        } },
      },
    })
  })

  test('a beta client is answered transcription_session.updated', () => {
    expect(events.sessionUpdated('sess_1', { ...config, turnDetection: null }, 'beta')).toMatchObject({
      type: 'transcription_session.updated',
      session: { input_audio_format: 'pcm16', turn_detection: null, input_audio_transcription: { language: 'en' } },
    })
  })

  test('delta, completed (usage in started seconds) and error carry OpenAI\'s fields', () => {
    expect(events.delta('item_1', 'hello ')).toMatchObject({ type: 'conversation.item.input_audio_transcription.delta', item_id: 'item_1', content_index: 0, delta: 'hello ' })
    expect(events.completed('item_1', 'hello world', 2.2)).toMatchObject({
      type: 'conversation.item.input_audio_transcription.completed', item_id: 'item_1', content_index: 0, transcript: 'hello world', usage: { type: 'duration', seconds: 3 },
    })
    const error = refusal('nope')
    expect(events.error(error)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json' } })
  })
})
