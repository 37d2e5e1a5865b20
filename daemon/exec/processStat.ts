import { readFileSync } from 'node:fs';

/** What `latch exec` needs from /proc/<pid>/stat: enough to follow a tree and to tell pids apart. */
export interface ProcessStat {
  /** R, S, D, T (stopped), Z (zombie), … */
  state: string;
  ppid: number;
  /** The process group: what one kill(-pgid) reaches. */
  pgid: number;
  /**
   * When the process started, in clock ticks since boot. A pid can be reused once its process is
   * gone; the pair (pid, start) cannot, so a signal meant for one never reaches its successor.
   */
  start: number;
}

/** The process's stat line, or undefined once it is gone (or on a system without /proc). */
export function readProcessStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself hold spaces and ')': the fields
  // that follow start after the last ')'. proc(5): state is field 3, ppid 4, pgrp 5, starttime 22.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0] ?? '',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    start: Number(fields[19]),
  };
}
