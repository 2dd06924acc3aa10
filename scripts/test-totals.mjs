// A node:test reporter that writes the totals of leaf tests as JSON.
export default async function* totals(source) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    if (event.data.details?.type === "suite") {
      // A suite that failed outside its tests (a hook, a crash) counts once.
      if (event.type === "test:fail" && !event.data.details?.error?.failureType?.startsWith("subtestsFailed")) counts.failed++;
      continue;
    }
    if (event.data.skip || event.data.todo) counts.skipped++;
    else if (event.type === "test:pass") counts.passed++;
    else counts.failed++;
  }
  yield JSON.stringify(counts);
}
