export function App() {
  return <main>Latch</main>;
}
