import { useEffect, useRef, useState } from 'react';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { initialText } from '../logic';
import type { Challenge, Tab } from '../types';
import type { SaveState } from '../components/EditorPane';
import { useSaveDraft, useValidation } from './useArena';

const SAVE_MS = 800;
const CHECK_MS = 400;

/**
 * The editor's text per tab: starts from the saved draft (else the challenge's start),
 * is saved to the server a moment after the last keystroke, and validated (line/column
 * problems) before any run.
 */
export function useEvalText(challenge: Challenge | undefined, tab: Tab) {
  const [texts, setTexts] = useState<Record<Tab, string> | null>(null);
  const saved = useRef<Record<Tab, string> | null>(null);
  const [saveState, setSaveState] = useState<SaveState>('idle');
  const save = useSaveDraft(challenge?.id ?? '');

  useEffect(() => {
    if (!challenge || texts) return;
    const start = { rules: initialText(challenge, 'rules'), judge: initialText(challenge, 'judge') };
    saved.current = { ...start };
    setTexts(start);
  }, [challenge, texts]);

  const text = texts?.[tab] ?? '';
  const toSave = useDebouncedValue(texts, SAVE_MS);
  useEffect(() => {
    if (!toSave || !saved.current) return;
    for (const t of ['rules', 'judge'] as Tab[]) {
      if (toSave[t] === saved.current[t]) continue;
      const value = toSave[t];
      setSaveState('saving');
      save.mutate(
        { tab: t, text: value },
        {
          onSuccess: () => {
            if (saved.current) saved.current[t] = value;
            setSaveState('saved');
          },
          onError: () => setSaveState('error'),
        },
      );
    }
    // Runs on the debounced texts only (a save per pause in typing, not per render).
  }, [toSave]);

  const checked = useDebouncedValue(text, CHECK_MS);
  const validation = useValidation(challenge?.id ?? '', tab, checked, !!challenge && texts !== null);
  const problems = validation.data?.problems ?? [];
  const errors = problems.filter((p) => p.level === 'error');
  const checking = checked !== text || validation.isFetching;

  const setText = (value: string) => setTexts((prev) => (prev ? { ...prev, [tab]: value } : prev));
  /** Whether the shown problems are about the current text (not an older one). */
  const current = !checking && validation.isSuccess;
  return { ready: texts !== null, text, setText, problems, errors, checking, current, saveState };
}
