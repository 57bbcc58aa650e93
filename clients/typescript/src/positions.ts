/**
 * Read-your-writes with standbys: every answer to a write carries `Factledger-Position` (the
 * primary's write-ahead-log position once the write committed, `16/B374D848`). The client
 * keeps the latest it got and sends it on every later call, so a deployment whose reads go to
 * standbys never answers this client from one older than its own writes.
 */

export const POSITION_HEADER = "Factledger-Position";

function lsn(position: string): bigint | null {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(position.trim());
  if (match === null) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The later of the position already known and `seen` (answers may arrive out of order; one
 * that is not a position changes nothing). */
export function laterPosition(known: string | undefined, seen: string | null): string | undefined {
  if (seen === null) return known;
  const next = lsn(seen);
  if (next === null) return known;
  const current = known === undefined ? null : lsn(known);
  return current === null || current < next ? seen.trim() : known;
}
