package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A node's presence is a key of its own in NAME_devices, node.NODE, written at Start and with
// every renewal of the holds, deleted at Close: a node that holds no device is known alive too.
// The tasks a node runs are kept in the shared database under its name (agent/a2a); when its
// presence goes, another node ends them.
const presencePrefix = "node."

func presenceKey(node string) string { return presencePrefix + node }

// presence is a presence key's value.
type presence struct {
	Node  string    `json:"node"`
	Since time.Time `json:"since"` // when the node started
}

// writePresence writes this node's presence key, anew or again.
func (c *Cluster) writePresence(ctx context.Context) error {
	if _, err := c.kv.Put(ctx, presenceKey(c.o.Node), c.presence); err != nil {
		return fmt.Errorf("cluster: writing the presence of node %s: %w", c.o.Node, err)
	}
	return nil
}

// deletePresence removes this node's presence key as it leaves.
func (c *Cluster) deletePresence() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := c.kv.Delete(ctx, presenceKey(c.o.Node)); err != nil {
		// It expires within the TTL.
		c.log.Debug("deleting the node's presence", "err", err)
	}
}

// Alive reports whether node is in the cluster: this node, or one whose presence key is in
// NAME_devices (written within the TTL, not deleted). It asks NATS, not this node's watch, so
// that a node that started a moment ago is alive as soon as it can have written anything.
func (c *Cluster) Alive(ctx context.Context, node string) (bool, error) {
	if node == c.o.Node {
		return true, nil
	}
	if !validName(node) {
		return false, nil // no node can have that name
	}
	if !c.nc.IsConnected() {
		return false, errNoNATS
	}
	_, err := c.kv.Get(ctx, presenceKey(node))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("cluster: reading the presence of node %s: %w", node, err)
	}
	return true, nil
}

// OnGone has f called with the name of each other node found gone from now on: its presence
// went (it left, or stopped renewing it) and was not written again for a whole TTL, long enough
// for a node cut off from NATS for a while, or a NATS server restarted, to write it again. f is
// called from a goroutine of the cluster's, one node at a time per node. stop unregisters f and
// waits for a call of it in progress.
func (c *Cluster) OnGone(f func(node string)) (stop func()) {
	c.goneMu.Lock()
	defer c.goneMu.Unlock()
	c.goneSeq++
	id := c.goneSeq
	c.gone[id] = f
	return func() {
		c.goneMu.Lock()
		defer c.goneMu.Unlock()
		delete(c.gone, id)
	}
}

// applyPresence takes a change of another node's presence key from the watch.
func (c *Cluster) applyPresence(node string, e jetstream.KeyValueEntry) {
	if node == c.o.Node {
		return // renewing mends this node's own
	}
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		c.mu.Lock()
		delete(c.nodes, node)
		c.mu.Unlock()
		c.suspect(node)
		return
	}
	c.mu.Lock()
	c.nodes[node] = true
	c.mu.Unlock()
}

// suspect checks, a TTL from now, whether node wrote its presence again, and tells OnGone's
// functions when it did not.
func (c *Cluster) suspect(node string) {
	c.mu.Lock()
	if c.closing || c.suspects[node] {
		c.mu.Unlock()
		return
	}
	c.suspects[node] = true
	c.mu.Unlock()
	c.wg.Go(func() { c.checkGone(node) })
}

func (c *Cluster) checkGone(node string) {
	defer func() {
		c.mu.Lock()
		delete(c.suspects, node)
		c.mu.Unlock()
	}()
	for {
		t := time.NewTimer(c.o.TTL)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, fetchTimeout)
		alive, err := c.Alive(ctx, node)
		cancel()
		switch {
		case err != nil:
			continue // NATS is out of reach: the node may be too; look again a TTL later
		case alive:
			return
		}
		c.log.Info("a node is gone: it has not renewed its presence for the TTL", "gone", node)
		c.goneMu.RLock()
		for _, f := range c.gone {
			f(node)
		}
		c.goneMu.RUnlock()
		return
	}
}

// forgetUnseenNodes suspects the nodes a watch that started again did not see (their keys
// expired while the watch was down, or the NATS server restarted without its storage).
func (c *Cluster) forgetUnseenNodes(seen map[string]bool) {
	c.mu.Lock()
	var unseen []string
	for node := range c.nodes {
		if !seen[presenceKey(node)] {
			delete(c.nodes, node)
			unseen = append(unseen, node)
		}
	}
	c.mu.Unlock()
	for _, node := range unseen {
		c.suspect(node)
	}
}

// validName is what names a cluster or a node: a token of a NATS subject, of a bucket's name
// and of a key (config's agent.cluster.name and .node accept the same).
func validName(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// presenceValue is this node's presence, as written.
func presenceValue(node string, since time.Time) []byte {
	b, _ := json.Marshal(presence{Node: node, Since: since})
	return b
}
