// Text a person reads to decide: names of clients, keys and wallets, and messages to sign. A character they cannot
// see, or one that reorders what they see (U+202E turns "gpj.exe" into "exe.jpg"), must not hide in it: names
// refuse them, a message shows each one escaped. Browser-safe.
import type { z } from "zod";

/**
 * Controls (C0, DEL, C1), format characters (bidi embeddings, overrides, isolates and marks, zero-width space and
 * joiners, soft hyphen, BOM, tags), line and paragraph separators, private-use and lone surrogate code points, and
 * every other default-ignorable one (Hangul fillers, …). Two are parts of visible emoji and pass: a variation selector
 * after a visible character (❤️), and a zero-width joiner between pictographs (👩‍💻).
 */
const HIDDEN = new RegExp(
  [
    // not a variation selector after a visible character
    String.raw`(?!(?<=[\p{L}\p{N}\p{P}\p{S}])[\uFE00-\uFE0F])`,
    // nor a zero-width joiner between pictographs (each perhaps with its selector or skin tone)
    String.raw`(?!(?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic}))`,
    String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Default_Ignorable_Code_Point}]`,
  ].join(""),
  "gu",
);

/** A code point as people look it up: U+202E. */
function codePointLabel(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** A zod refinement for a name: refused, naming the first hidden character, when it holds one. */
export function visibleName(field: string) {
  return (value: string, ctx: z.RefinementCtx) => {
    const hidden = value.match(HIDDEN);
    if (hidden)
      ctx.addIssue({
        code: "custom",
        message: `${field} must not contain ${codePointLabel(hidden[0])}: no invisible, control or text-direction characters in names`,
      });
  };
}

/** A piece of text as shown: as written, or one hidden character to show by its code point. */
export type VisibleSegment = { text: string } | { hidden: string };

/**
 * `text` cut into what is shown as written and the hidden characters between, each to be shown escaped. Line
 * breaks and tabs are visible as such and stay.
 */
export function visibleSegments(text: string): VisibleSegment[] {
  const segments: VisibleSegment[] = [];
  let from = 0;
  for (const match of text.matchAll(HIDDEN)) {
    if (match[0] === "\n" || match[0] === "\t") continue;
    if (match.index > from) segments.push({ text: text.slice(from, match.index) });
    segments.push({ hidden: codePointLabel(match[0]) });
    from = match.index + match[0].length;
  }
  if (from < text.length) segments.push({ text: text.slice(from) });
  return segments;
}

/** `text` on one line of plain text (a list, a notification): each hidden character written as ⟨U+202E⟩. */
export function escapedText(text: string): string {
  return visibleSegments(text)
    .map((segment) => ("text" in segment ? segment.text : `⟨${segment.hidden}⟩`))
    .join("");
}
