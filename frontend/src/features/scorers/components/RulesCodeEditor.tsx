import { useEffect, useMemo, useRef } from 'react';
import CodeMirror, { EditorView, type ReactCodeMirrorRef } from '@uiw/react-codemirror';
import { yaml } from '@codemirror/lang-yaml';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { Prec, type Text } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import type { RuleProblem } from './RulesEditor';


/** The offsets a 1-based line and column point at, clamped to the text. */
function span(doc: Text, p: RuleProblem): { from: number; to: number } {
  const line = doc.line(Math.min(Math.max(p.line, 1), doc.lines));
  const from = Math.min(line.from + Math.max(p.column - 1, 0), line.to);
  return { from, to: from < line.to ? line.to : from };
}

export interface RulesCodeEditorProps {
  id: string;
  value: string;
  onChange: (text: string) => void;
  problems: RuleProblem[];
  /** Moves the cursor to a problem when it changes (clicked in the list). */
  focus: RuleProblem | null;
  describedBy?: string;
  labelledBy: string;
  /** 'text' for prose (a judge rubric): no YAML highlighting. */
  language?: 'yaml' | 'text';
  /** Ctrl/Cmd+Enter in the editor (e.g. run it). */
  onSubmit?: () => void;
  minHeight?: string;
}

/** CodeMirror 6 with YAML highlighting; the server's rule problems are its diagnostics. */
export default function RulesCodeEditor({
  id,
  value,
  onChange,
  problems,
  focus,
  describedBy,
  labelledBy,
  language = 'yaml',
  onSubmit,
  minHeight = '14rem',
}: RulesCodeEditorProps) {
  const ref = useRef<ReactCodeMirrorRef>(null);
  // Read at key time, so a new callback does not rebuild the editor's extensions.
  const submit = useRef(onSubmit);
  submit.current = onSubmit;
  const hasSubmit = onSubmit !== undefined;
  const extensions = useMemo(
    () => [
      ...(language === 'yaml' ? [yaml()] : []),
      // Above the default keymap, where Mod-Enter inserts a blank line.
      ...(hasSubmit ? [Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (submit.current?.(), true) }]))] : []),
      lintGutter(),
      EditorView.lineWrapping,
      // The editable area is what assistive tech and the keyboard reach: name it.
      EditorView.contentAttributes.of({ 'aria-labelledby': labelledBy, ...(describedBy ? { 'aria-describedby': describedBy } : {}) }),
    ],
    [labelledBy, describedBy, language, hasSubmit],
  );

  useEffect(() => {
    const view = ref.current?.view;
    if (!view) return;
    const diagnostics: Diagnostic[] = problems.map((p) => ({ ...span(view.state.doc, p), severity: p.level ?? 'error', message: p.message }));
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }, [problems]);

  useEffect(() => {
    const view = ref.current?.view;
    if (!view || !focus) return;
    const { from } = span(view.state.doc, focus);
    view.dispatch({ selection: { anchor: from }, scrollIntoView: true });
    view.focus();
  }, [focus]);

  return (
    <div className="overflow-hidden rounded-xl border border-zinc-200" data-testid="rules-editor">
      <CodeMirror
        ref={ref}
        id={id}
        value={value}
        onChange={onChange}
        extensions={extensions}
        // Tab leaves the editor (no keyboard trap); indent with spaces as YAML wants.
        indentWithTab={false}
        minHeight={minHeight}
        basicSetup={{ foldGutter: false, highlightActiveLine: false }}
      />
    </div>
  );
}
