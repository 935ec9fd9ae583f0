/**
 * The live decoder's PocketSphinx settings, chosen by bench/live-settings.ts on the LibriVox recording
 * (docs/decisions.md, "Live transcription: the engine"): about 0.4 of a core per stream with the
 * library's defaults, under 0.2 with these, for the same word error rate.
 * - `-fwdflat no`: no second pass over the whole utterance at its end. That pass held the stream's
 *   thread up to 0.8 s at each turn's end (partials of the next turn waited behind it); the lattice
 *   for the words' confidence comes from the first pass instead.
 * - `-maxhmmpf 3000 -maxwpf 10`: at most 3,000 HMMs and 10 word exits a frame (the library's 30,000 and
 *   no limit); 2,000 cost 4 points of WER.
 * - `-topn 2`: two Gaussians a frame scored instead of four. (`-ds 2` costs the same and saves as much;
 *   both together cost 22 points. Narrower `-beam`/`-wbeam`/`-pbeam` cost 10 points and more.)
 */
export const LIVE_DECODER_SETTINGS: Readonly<Record<string, string>> = {
  '-fwdflat': 'no',
  '-maxhmmpf': '3000',
  '-maxwpf': '10',
  '-topn': '2',
}
