// What the `story` graph (graphs.ts) answers and when it stops, shared with the specs; a module
// of its own, so the graphs module exports graphs only.

/** The answer of `story`, streamed word by word. */
export const STORY =
  'Once upon a time a fox crossed the frozen river, found the lantern and carried it home.';
/** How many words of `story` stream before it waits for its gate. */
export const STORY_WORDS_BEFORE_GATE = 5;
