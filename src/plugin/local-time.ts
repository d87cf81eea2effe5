/**
 * Times as the terminal shows them: in the dev server process's own time zone (issue #18: the
 * `/__insitu/` page printed UTC, which matched nothing the terminal showed).
 *
 * Contract: `localTime(epochMs)` is `YYYY-MM-DD HH:MM:SS.mmm ±HH:MM` in the process's time zone
 * (the `TZ` environment variable, else the system's; read at each call, so a changed `TZ` counts),
 * with the UTC offset in effect at that moment. `timeZoneName()` names the zone (`Europe/Berlin`;
 * `UTC` in most containers). Server-rendered text: nothing depends on the browser's zone.
 */

export function localTime(epochMs: number): string {
  const date = new Date(epochMs)
  const two = (n: number) => String(n).padStart(2, '0')
  const day = `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`
  const time = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`
  return `${day} ${time} ${utcOffset(date)}`
}

/** `+05:30`, `-08:00`, `+00:00`: the offset from UTC at that date. */
function utcOffset(date: Date): string {
  const minutes = -date.getTimezoneOffset()
  const sign = minutes < 0 ? '-' : '+'
  const magnitude = Math.abs(minutes)
  return `${sign}${String(Math.floor(magnitude / 60)).padStart(2, '0')}:${String(magnitude % 60).padStart(2, '0')}`
}

export function timeZoneName(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'the system time zone'
}
