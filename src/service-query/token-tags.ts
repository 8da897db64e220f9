/**
 * The token numbers named by a key request's `tokenTag`: a comma-separated list of tags. A tag
 * may itself hold commas (`arweave,ethereum-ar-AR,0x…`), so the list is read left to right taking
 * the longest run of comma-joined pieces that is a known tag; a piece that starts no known tag
 * names nothing. Sorted, without repeats; empty when no tag is known.
 */
export function tokenIndexesOf(list: string, tags: readonly string[]): number[] {
  const pieces = list.split(',');
  const found = new Set<number>();
  let i = 0;
  while (i < pieces.length) {
    let longest = -1;
    let end = i;
    let text = '';
    for (let j = i; j < pieces.length; j++) {
      text = j === i ? pieces[j]! : `${text},${pieces[j]}`;
      const index = tags.indexOf(text);
      if (index >= 0) {
        longest = index;
        end = j;
      }
    }
    if (longest >= 0) found.add(longest);
    i = end + 1;
  }
  return [...found].sort((a, b) => a - b);
}
