/**
 * The tap→unblocked baseline's other process: an HTTP server that, for each POST, sends one
 * WebSocket message to its connected client. Prints its port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const clients = new Set<WebSocket>();
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    for (const client of clients) client.send('decided');
    response.writeHead(200).end('ok');
  });
});
new WebSocketServer({ server }).on('connection', (socket) => {
  clients.add(socket);
  socket.on('close', () => clients.delete(socket));
});
server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
