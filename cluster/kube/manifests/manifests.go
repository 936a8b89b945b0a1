// Package manifests holds the Kubernetes manifests of inlay's scheduler
// (RBAC and a Deployment) and applies them.
package manifests

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Scheduler is cluster/kube/manifests/inlay-scheduler.yaml.
//
//go:embed inlay-scheduler.yaml
var Scheduler []byte

// document is one object of the manifests, typed and as JSON.
type document struct {
	obj  any
	json []byte
}

func documents() ([]document, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(Scheduler), 4096)
	var out []document
	for i := 0; ; i++ {
		var raw map[string]any
		err := dec.Decode(&raw)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("inlay-scheduler.yaml: document %d: %w", i+1, err)
		}
		if raw == nil {
			continue
		}
		data, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("inlay-scheduler.yaml: document %d: %w", i+1, err)
		}
		out = append(out, document{obj, data})
	}
}

// Objects decodes the manifests in order.
func Objects() ([]any, error) {
	docs, err := documents()
	if err != nil {
		return nil, err
	}
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = d.obj
	}
	return out, nil
}

// FieldManager is the field manager of the manifests' server-side apply.
const FieldManager = "inlay-scheduler-manifests"

// Apply applies the manifests' objects server-side (as kubectl apply
// --server-side does: applying again changes nothing, and a field another
// manager set is taken over); with deployment false it leaves the
// Deployment out (a local cluster of KWOK nodes runs no containers).
func Apply(ctx context.Context, cs kubernetes.Interface, deployment bool) error {
	docs, err := documents()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: &force}
	apply := types.ApplyPatchType
	for _, d := range docs {
		var err error
		switch x := d.obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Patch(ctx, x.Name, apply, d.json, opts)
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(x.Namespace).Patch(ctx, x.Name, apply, d.json, opts)
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Patch(ctx, x.Name, apply, d.json, opts)
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Patch(ctx, x.Name, apply, d.json, opts)
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(x.Namespace).Patch(ctx, x.Name, apply, d.json, opts)
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(x.Namespace).Patch(ctx, x.Name, apply, d.json, opts)
		case *appsv1.Deployment:
			if deployment {
				_, err = cs.AppsV1().Deployments(x.Namespace).Patch(ctx, x.Name, apply, d.json, opts)
			}
		default:
			err = fmt.Errorf("inlay-scheduler.yaml: unexpected object %T", d.obj)
		}
		if err != nil {
			return fmt.Errorf("inlay-scheduler.yaml: apply %T: %w", d.obj, err)
		}
	}
	return nil
}

// Deployment returns the manifests' Deployment (its container's args are
// what a cluster runs).
func Deployment() (*appsv1.Deployment, error) {
	objs, err := Objects()
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d, nil
		}
	}
	return nil, fmt.Errorf("inlay-scheduler.yaml: no Deployment")
}

// Token returns a bearer token of the inlay-scheduler service account
// (TokenRequest API), for running the scheduler under its own role.
func Token(ctx context.Context, cs kubernetes.Interface) (string, error) {
	exp := int64(24 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts("inlay-system").CreateToken(ctx, "inlay-scheduler",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}
