package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/protocol"
)

// rewatchDelay is the wait before a watch that failed is started again.
const rewatchDelay = time.Second

// watch follows NAME_devices until Close and tells the hub of the other nodes' devices. A watch
// that ends (NATS lost its consumer, or the connection came back) is started again; its first
// values are the bucket as it is, and a device the hub was told of that is no longer among them
// is gone.
func (c *Cluster) watch() {
	first := true
	for c.ctx.Err() == nil {
		err := c.watchOnce(first)
		first = false
		if err == nil {
			continue
		}
		if c.ctx.Err() == nil {
			c.log.Warn("watching who holds which device", "err", err)
		}
		t := time.NewTimer(rewatchDelay)
		select {
		case <-c.ctx.Done():
		case <-c.rewatch:
		case <-t.C:
		}
		t.Stop()
	}
}

func (c *Cluster) watchOnce(first bool) error {
	w, err := c.kv.WatchAll(c.ctx)
	if err != nil {
		return err
	}
	defer func() {
		w.Stop()
		for range w.Updates() { // what was on its way: the watch's delivery must not block on it
		}
	}()
	seen := map[string]bool{} // the keys among the first values; nil once they are all in
	for {
		var e jetstream.KeyValueEntry
		var ok bool
		select {
		case e, ok = <-w.Updates():
		case <-c.rewatch:
			return nil
		}
		if !ok {
			break
		}
		if e == nil {
			if seen != nil {
				c.forgetUnseen(seen)
				seen = nil
			}
			continue
		}
		if seen != nil {
			seen[e.Key()] = true
		}
		c.apply(e, seen != nil && first)
	}
	if c.ctx.Err() != nil {
		return nil
	}
	return errors.New("the watch ended")
}

// forgetUnseen drops from the hub the devices of other nodes that the bucket no longer holds,
// once a watch has read it whole; the first time, the hub knows of the other nodes' devices.
func (c *Cluster) forgetUnseen(seen map[string]bool) {
	c.mu.Lock()
	var gone []viewEntry
	var macs []string
	for mac, v := range c.view {
		if !seen[mac] {
			delete(c.view, mac)
			c.unrefTools(v.tools)
			gone, macs = append(gone, v), append(macs, mac)
		}
	}
	c.mu.Unlock()
	for i, mac := range macs {
		c.hub.Remote(mac, nil, fmt.Errorf("node %s no longer holds it", gone[i].node))
	}
	c.readyOnce.Do(func() { close(c.ready) })
}

// apply takes one change of NAME_devices to the hub. The watch delivers them in the order they
// were written, so a hold of this node's, or a change older than what was applied, is skipped.
// stale is true for the first values of the first watch, before this node holds anything: a
// hold in this node's name then is a predecessor's of the same name, and is deleted.
func (c *Cluster) apply(e jetstream.KeyValueEntry, stale bool) {
	mac := e.Key()
	if _, err := protocol.ParseMAC(mac); err != nil {
		return
	}
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		c.mu.Lock()
		v, viewed := c.view[mac]
		_, mine := c.held[mac]
		if mine || !viewed {
			c.mu.Unlock() // this node's own: renewing mends a hold that expired
			return
		}
		delete(c.view, mac)
		c.unrefTools(v.tools)
		c.mu.Unlock()
		why := fmt.Errorf("the device left node %s", v.node)
		if op == jetstream.KeyValuePurge {
			why = fmt.Errorf("node %s stopped renewing its hold: it is gone or cut off from NATS", v.node)
		}
		c.hub.Remote(mac, nil, why)
		return
	}
	var h holding
	if err := json.Unmarshal(e.Value(), &h); err != nil || h.Node == "" {
		c.log.Debug("a hold that is not one", "mac", mac, "value", string(e.Value()))
		return
	}
	c.mu.Lock()
	if mine := c.held[mac]; mine != nil {
		c.mu.Unlock()
		if h.Node != c.o.Node && e.Revision() > mine.rev {
			c.lose(mac, mine.since, h.Node)
		}
		return
	}
	if h.Node == c.o.Node {
		c.mu.Unlock()
		if stale {
			c.deleteHold(mac, e.Revision())
		}
		return
	}
	old, viewed := c.view[mac]
	if viewed && e.Revision() <= old.rev {
		c.mu.Unlock()
		return
	}
	c.view[mac] = viewEntry{rev: e.Revision(), node: h.Node, tools: h.Tools}
	t := c.toolsets[h.Tools]
	if t == nil {
		t = &toolsRef{}
		c.toolsets[h.Tools] = t
	}
	t.refs++
	if viewed {
		c.unrefTools(old.tools)
	}
	raw := t.raw
	c.mu.Unlock()
	if raw == nil {
		raw = c.fetchTools(h.Tools)
	}
	c.hub.Remote(mac, &hub.RemoteDevice{Node: h.Node, Since: h.Since, RemoteAddr: h.Remote, Tools: raw}, nil)
}

// fetchTimeout bounds reading a device's declarations.
const fetchTimeout = 5 * time.Second

// fetchTools reads the declarations under key from NAME_tools, and keeps them while a device
// uses them; nil when they cannot be read (the hub then shows the device without tools, and the
// next renewal of its hold tries again).
func (c *Cluster) fetchTools(key string) []byte {
	ctx, cancel := context.WithTimeout(c.ctx, fetchTimeout)
	defer cancel()
	e, err := c.tools.Get(ctx, key)
	if err != nil {
		c.log.Warn("reading a device's tool declarations", "sha256", key, "err", err)
		return nil
	}
	raw := e.Value()
	c.mu.Lock()
	if t := c.toolsets[key]; t != nil && t.raw == nil {
		t.raw = raw
	}
	c.mu.Unlock()
	return raw
}
