import type { KeyboardEvent } from 'react';
import { cn, focusRing } from '@/lib/cn';
import type { Tab } from '../types';

export const TAB_LABEL: Record<Tab, string> = { rules: 'Deterministic rule (YAML)', judge: 'LLM as judge (rubric)' };
// What fits a tab in a narrow pane (a phone, or a third of a 1024 px screen).
const SHORT_LABEL: Record<Tab, string> = { rules: 'YAML rules', judge: 'LLM judge' };
const ORDER: Tab[] = ['rules', 'judge'];

/** The two eval modes; arrow keys move between them (WAI-ARIA tabs). */
export function EditorTabs({ tab, onTab }: { tab: Tab; onTab: (t: Tab) => void }) {
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    e.preventDefault();
    const next = ORDER[(ORDER.indexOf(tab) + 1) % ORDER.length];
    onTab(next);
    document.getElementById(`arena-tab-${next}`)?.focus();
  };
  return (
    <div role="tablist" aria-label="Eval mode" className="flex gap-1 rounded-xl border border-zinc-200 bg-zinc-50 p-1" onKeyDown={onKey}>
      {ORDER.map((t) => (
        <button
          key={t}
          id={`arena-tab-${t}`}
          type="button"
          role="tab"
          aria-selected={tab === t}
          aria-controls="arena-editor-panel"
          tabIndex={tab === t ? 0 : -1}
          onClick={() => onTab(t)}
          className={cn(
            'h-8 flex-1 rounded-xl px-2 text-sm font-medium',
            tab === t ? 'border border-zinc-200 bg-white text-indigo-700' : 'text-zinc-600 hover:text-zinc-900',
            focusRing,
          )}
        >
          <span className="sm:hidden lg:inline xl:hidden">{SHORT_LABEL[t]}</span>
          <span className="hidden sm:inline lg:hidden xl:inline">{TAB_LABEL[t]}</span>
        </button>
      ))}
    </div>
  );
}
