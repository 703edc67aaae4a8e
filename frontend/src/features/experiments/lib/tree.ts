export interface TreeNode<T> {
  item: T;
  children: TreeNode<T>[];
}

/**
 * Versions as a forest by parent link, oldest first at each level. A version whose parent
 * is not in the list becomes a root, so nothing is ever hidden.
 */
export function buildTree<T extends { id: number; parent_id: number | null; number: number }>(items: T[]): TreeNode<T>[] {
  const nodes = new Map(items.map((v) => [v.id, { item: v, children: [] as TreeNode<T>[] }]));
  const roots: TreeNode<T>[] = [];
  for (const n of nodes.values()) {
    const parent = n.item.parent_id !== null ? nodes.get(n.item.parent_id) : undefined;
    if (parent && parent !== n) parent.children.push(n);
    else roots.push(n);
  }
  const sort = (list: TreeNode<T>[]) => {
    list.sort((a, b) => a.item.number - b.item.number);
    list.forEach((c) => sort(c.children));
  };
  sort(roots);
  return roots;
}
