import { useEffect, useRef, useState } from 'react';

/**
 * Focus the first invalid control of a form after a failed submit (client checks or the
 * server's 422), so the message is seen even at the top of a long, scrolled form.
 * Call `focusFirstInvalid()` where the errors are set; focus moves after the next render.
 */
export function useFocusFirstInvalid<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [request, setRequest] = useState(0);
  useEffect(() => {
    if (request === 0) return;
    ref.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [request]);
  return { ref, focusFirstInvalid: () => setRequest((n) => n + 1) };
}
