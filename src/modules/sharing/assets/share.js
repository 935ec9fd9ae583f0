// The share page's one script: a segment's time plays the recording from there (byte ranges through the link).
const player = document.getElementById('player')
document.addEventListener('click', event => {
  const button = event.target instanceof Element ? event.target.closest('button[data-start]') : null
  if (!button || !player) return
  player.currentTime = Number(button.getAttribute('data-start'))
  player.play().catch(() => {})
})
