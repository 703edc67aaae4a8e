/**
 * A three-way merge of a form after a stale save (412): `base` is what this tab last saved,
 * `mine` what it holds now, `theirs` what the server holds. A field only one side changed
 * takes that side's value; one both changed differently is a conflict, left to the user
 * (theirs is kept until they choose), so newer work elsewhere is never overwritten silently.
 */
export function mergeForms<T extends object>(base: T | null, mine: T, theirs: T): { merged: T; conflicts: (keyof T)[] } {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const merged = { ...theirs };
  const conflicts: (keyof T)[] = [];
  for (const key of Object.keys(mine) as (keyof T)[]) {
    const was = base ? base[key] : theirs[key];
    if (same(mine[key], was) || same(mine[key], theirs[key])) continue; // not mine, or the same
    if (same(theirs[key], was)) merged[key] = mine[key];
    else conflicts.push(key);
  }
  return { merged, conflicts };
}
