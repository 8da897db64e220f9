/**
 * The last page at or after `from` that still holds a record at or above `target`, found by
 * probing at doubling distances and then halving. Every probe is stored like any page. Pages only
 * shift later while this runs, so a page found to hold such a record stays a safe start.
 */
export async function seekPage(input: {
  from: number;
  target: number;
  fetch: (page: number) => Promise<number[]>;
}): Promise<number> {
  const reaches = (ids: number[]): boolean => ids.length > 0 && Math.max(...ids) >= input.target;
  let good = input.from;
  let bad: number | null = null;
  for (let step = 1; bad === null; step *= 2) {
    const probe = good + step;
    if (reaches(await input.fetch(probe))) good = probe;
    else bad = probe;
  }
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (reaches(await input.fetch(middle))) good = middle;
    else bad = middle;
  }
  return good;
}
