// Ages and times left as people read them; the page script keeps them ticking.

export function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d`;
}

export const ago = (now: number, iso: string): string => `${span(now - Date.parse(iso))} ago`;

export function left(now: number, iso: string): string {
  const ms = Date.parse(iso) - now;
  return ms > 0 ? `${span(ms)} left` : 'expired';
}
