import { useEffect, useRef, useState } from 'react';
import { isStaleWrite, type ApiError } from '@/api/errors';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { initialText } from '../logic';
import type { Challenge, Tab } from '../types';
import type { SaveState } from '../components/EditorPane';
import { useSaveDraft, useValidation } from './useArena';

const SAVE_MS = 800;
const CHECK_MS = 400;
const TABS: Tab[] = ['rules', 'judge'];

/** A draft save refused because another tab or window saved that draft since (412). */
export interface StaleDraft {
  tab: Tab;
  error: ApiError;
  /** What this window tried to save. */
  text: string;
}

/**
 * The editor's text per tab: starts from the saved draft (else the challenge's start),
 * is saved to the server a moment after the last keystroke, and validated (line/column
 * problems) before any run. Each save names the draft version it is based on; when
 * another window saved since, nothing is overwritten: `stale` says so until the user
 * reloads theirs (`reload`) or keeps this one (`keepMine`).
 */
export function useEvalText(challenge: Challenge | undefined, tab: Tab) {
  const [texts, setTexts] = useState<Record<Tab, string> | null>(null);
  const saved = useRef<Record<Tab, string> | null>(null);
  const versions = useRef<Record<Tab, number | null>>({ rules: null, judge: null });
  const [saveState, setSaveState] = useState<SaveState>('idle');
  const [stale, setStale] = useState<StaleDraft | null>(null);
  const save = useSaveDraft(challenge?.id ?? '');

  useEffect(() => {
    if (!challenge || texts) return;
    const start = { rules: initialText(challenge, 'rules'), judge: initialText(challenge, 'judge') };
    versions.current = { rules: challenge.tabs.rules.draft_row_version, judge: challenge.tabs.judge.draft_row_version };
    saved.current = { ...start };
    setTexts(start);
  }, [challenge, texts]);

  // Saves go one at a time, each based on the version the one before it returned: a save
  // sent while the previous one is in flight would otherwise be refused as stale by our own write.
  const queue = useRef<Promise<unknown>>(Promise.resolve());
  const staleTab = useRef<Tab | null>(null);
  /** `version` undefined: based on the latest this window saved (read when its turn comes). */
  const send = (t: Tab, value: string, version?: number | null) => {
    setSaveState('saving');
    const forced = version !== undefined; // Keep mine: based on the version the refusal named
    queue.current = queue.current.then(async () => {
      if (!forced && staleTab.current === t) return; // waits for Reload or Keep mine
      try {
        const draft = await save.mutateAsync({ tab: t, text: value, version: forced ? version : versions.current[t] });
        if (saved.current) saved.current[t] = value;
        versions.current[t] = draft.row_version;
        if (staleTab.current === t) staleTab.current = null;
        setStale((s) => (s?.tab === t ? null : s));
        setSaveState('saved');
      } catch (e) {
        if (isStaleWrite(e)) {
          staleTab.current = t;
          setStale({ tab: t, error: e, text: value });
          setSaveState('conflict');
        } else setSaveState('error');
      }
    });
  };

  const text = texts?.[tab] ?? '';
  const toSave = useDebouncedValue(texts, SAVE_MS);
  useEffect(() => {
    if (!toSave || !saved.current) return;
    for (const t of TABS) {
      if (toSave[t] === saved.current[t] || stale?.tab === t) continue;
      send(t, toSave[t]);
    }
    // Runs on the debounced texts only (a save per pause in typing, not per render).
  }, [toSave]);

  /** Takes the newer draft the other window saved (this window's edit is dropped). */
  const reload = () => {
    if (!stale) return;
    const current = stale.error.current as { text?: string } | null | undefined;
    const newer = typeof current?.text === 'string' ? current.text : (saved.current?.[stale.tab] ?? '');
    versions.current[stale.tab] = stale.error.currentVersion;
    if (saved.current) saved.current[stale.tab] = newer;
    setTexts((prev) => (prev ? { ...prev, [stale.tab]: newer } : prev));
    staleTab.current = null;
    setStale(null);
    setSaveState('idle');
  };
  /** Saves this window's text over the newer draft: the user chose to. */
  const keepMine = () => {
    if (!stale || !texts) return;
    send(stale.tab, texts[stale.tab], stale.error.currentVersion);
  };

  const checked = useDebouncedValue(text, CHECK_MS);
  const validation = useValidation(challenge?.id ?? '', tab, checked, !!challenge && texts !== null);
  const problems = validation.data?.problems ?? [];
  const errors = problems.filter((p) => p.level === 'error');
  const checking = checked !== text || validation.isFetching;

  const setText = (value: string) => setTexts((prev) => (prev ? { ...prev, [tab]: value } : prev));
  /** Whether the shown problems are about the current text (not an older one). */
  const current = !checking && validation.isSuccess;
  return { ready: texts !== null, text, setText, problems, errors, checking, current, saveState, stale, reload, keepMine, keeping: save.isPending };
}
