export type ReviewAction = 'approve' | 'reject' | 'edit';

/** True when a key press lands in something the user types into. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!target || typeof (target as Element).closest !== 'function') return false;
  const el = target as HTMLElement;
  if (el.isContentEditable) return true;
  return el.closest('input, textarea, select, [contenteditable="true"], [role="textbox"]') !== null;
}

/**
 * The review page's shortcuts (FR-PR-002): "." approve, "," reject, "E" edit. Ignored while
 * typing in a field, with a modifier held, on a repeat, or inside an open dialog.
 */
export function reviewKeyAction(e: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey' | 'repeat' | 'defaultPrevented'>): ReviewAction | null {
  if (e.defaultPrevented || e.repeat || e.ctrlKey || e.metaKey || e.altKey) return null;
  if (isTypingTarget(e.target)) return null;
  const t = e.target as Element | null;
  if (t && typeof t.closest === 'function' && t.closest('[role="dialog"]')) return null;
  if (e.key === '.') return 'approve';
  if (e.key === ',') return 'reject';
  if (e.key === 'e' || e.key === 'E') return 'edit';
  return null;
}
